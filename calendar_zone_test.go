package parcela

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// São Paulo's zone is parcela's own, whatever zone database the host has:
// on a host whose database predates 2019 (daylight saving every November,
// abolished that year), the end of a November due day fell an hour
// earlier than on every other instance, so two instances disagreed on
// when a bill was late, and the host's answer was stored with it.
func TestSaoPauloIsNotTheHostsZone(t *testing.T) {
	if os.Getenv("ZONE_TEST_CHILD") != "" {
		// In the child, under the stale database: print what it computes.
		if _, err := os.Stdout.WriteString("end of 20 November 2026: " + EndOfDay(time.Date(2026, time.November, 20, 12, 0, 0, 0, time.UTC)).UTC().Format(time.RFC3339Nano) + "\n"); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("testdata", "zoneinfo-2018"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "America", "Sao_Paulo"))
	if err != nil {
		t.Fatal(err)
	}
	stale, err := time.LoadLocationFromTZData("America/Sao_Paulo", data)
	if err != nil {
		t.Fatal(err)
	}
	if _, off := time.Date(2026, time.November, 20, 12, 0, 0, 0, stale).Zone(); off != -2*3600 {
		t.Fatalf("the stale database's offset on 20 November 2026 is %d s, want daylight saving's -7200", off)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSaoPauloIsNotTheHostsZone$")
	cmd.Env = append(os.Environ(), "ZONE_TEST_CHILD=1", "ZONEINFO="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if want := "end of 20 November 2026: 2026-11-21T02:59:59.999Z"; !strings.Contains(string(out), want) {
		t.Fatalf("under a host zone database of 2018, %q; want %q", strings.TrimSpace(string(out)), want)
	}
}
