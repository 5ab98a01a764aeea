package parcela

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestValidText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in               string
		single, freeText bool
	}{
		{"Maria da Silva", true, true},
		{"São Paulo — Confeitaria ☕", true, true},
		{"", true, true},
		{"a\x00b", false, false},
		{"\x00", false, false},
		{"line\nbreak", false, true},
		{"tab\there", false, true},
		{"windows\r\nline", false, true},
		{"bell\a", false, false},
		{"escape\x1b[31m", false, false},
		{"delete\x7f", false, false},
		{"c1 \u0085 next line", false, false},
		{"c1 \u009b csi", false, false},
		{"bad utf-8 \xff", false, false},
		{"zero width\u200bspace", true, true}, // a format character, not a control
		{"right-to-left mark \u200f", true, true},
		{"override \u202egpj.exe", false, false}, // shown as "exe.jpg"
		{"embedding \u202a", false, false},
		{"isolate \u2066x\u2069", false, false},
		{"pop \u202c", false, false},
		{"line\u2028separator", false, true}, // a line break in a name
		{"paragraph\u2029separator", false, true},
		{strings.Repeat("a", 10000), true, true},
	}
	for _, tt := range tests {
		if got := ValidText(tt.in, SingleLine); got != tt.single {
			t.Errorf("ValidText(%q, SingleLine) = %v, want %v", tt.in, got, tt.single)
		}
		if got := ValidText(tt.in, FreeText); got != tt.freeText {
			t.Errorf("ValidText(%q, FreeText) = %v, want %v", tt.in, got, tt.freeText)
		}
	}
}

func TestIsUUID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10", true},
		{"6B0F3A0E-9D53-4A8E-9F0B-2F5D1C1E7A10", true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"6b0f3a0e9d534a8e9f0b2f5d1c1e7a10", false},       // no hyphens
		{"{6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10}", false}, // braces
		{"urn:uuid:6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10", false},
		{"6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a1", false},     // 35 characters
		{"6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a10 ", false},   // 37
		{"6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a1g", false},    // not hex
		{"6b0f3a0e-9d53-4a8e-9f0b-2f5d1c1e7a1\x00", false}, // NUL
		{"6b0f3a0e_9d53-4a8e-9f0b-2f5d1c1e7a10", false},
		{"", false},
		{"1 OR 1=1", false},
	}
	for _, tt := range tests {
		if got := IsUUID(tt.in); got != tt.want {
			t.Errorf("IsUUID(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestCutText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""}, {"abc", 3, "abc"}, {"abcd", 3, "abc"}, {"açúcar", 3, "açú"}, {"ção", 0, ""}, {"日本語", 2, "日本"},
	} {
		if got := CutText(tt.s, tt.n); got != tt.want {
			t.Errorf("CutText(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// A value quoted in an error message is cut at characters: cut in a
// letter's bytes, the message would not be UTF-8.
func TestTruncateTextKeepsLetters(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ç", 40) // 80 bytes
	got := truncateText(long, 32)
	if !utf8.ValidString(got) || got != strings.Repeat("ç", 32)+"…" {
		t.Errorf("truncateText = %q", got)
	}
	if got := truncateText("pix", 32); got != "pix" {
		t.Errorf("short text changed: %q", got)
	}
}

func TestTrimText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                           "",
		"\u200b":                     "",
		"\u200b\u200c\u200d\u2060":   "",
		" \ufeff\u00ad\u200e\u200f ": "",
		"\u3000\t\n":                 "",
		"\u200bMaria\u200b":          "Maria",
		" zero width\u200bspace ":    "zero width\u200bspace",
		"👩\u200d💻":                   "👩\u200d💻",
		// A flag of Scotland ends in tag characters; a chillu in a joiner.
		"Whisky \U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F": "Whisky \U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F",
		"\u0d28\u0d4d\u200d ":         "\u0d28\u0d4d\u200d",
		"\u200d\u200c":                "",
		"\U000E0067\U000E007F \u200b": "",
		"\u202eabc":                   "\u202eabc", // refused by ValidText, not trimmed
		// The Hangul fillers and the blank Braille cell show nothing alone;
		// a filler before a vowel is how old Hangul writes it.
		"\u3164":              "",
		"\u115f\u1160 \uffa0": "",
		"\u2800\u200b\u2800":  "",
		"\u115f\u1161":        "\u115f\u1161",
		// So are the other default-ignorable marks and the variation
		// selectors, which stay beside what they change.
		"\u034f":        "",
		"\u17b4\u17b5 ": "",
		"\ufe0f\ufe00":  "",
		"\U000E0100":    "",
		"\u2764\ufe0f":  "\u2764\ufe0f",
		"Maria\u034f":   "Maria\u034f",
	} {
		if got := TrimText(in); got != want {
			t.Errorf("TrimText(%+q) = %+q, want %+q", in, got, want)
		}
	}
}
