package sqldb

import (
	"context"
	"strings"
	"testing"
)

// A password with an unencoded "@" (generated passwords hold one often)
// is split by pgx at the first "@": the rest of the password becomes the
// host, and the refusal that promises to name "the user, database and
// address (never the password)" prints it in "lookup …: no such host",
// on stderr and in whatever collects it. Such an address must be refused
// without a word of its password (percent-encode it as %40).
func TestPasswordWithAnAtSignIsNeverRepeated(t *testing.T) {
	t.Parallel()
	const secret = "ssw0rdSECRET"
	_, err := Open(context.Background(), "postgres://u:pa@"+secret+"@127.0.0.1:1/db", Config{})
	if err == nil {
		t.Fatal("opened")
	}
	if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "%40") {
		t.Fatalf("the error repeats the password: %v", err)
	}
}
