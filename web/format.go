package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"parcela"
)

// brl writes cents as Brazilians read money: R$ 1.990,00, with a no-break
// space so the symbol never ends a line.
func brl(cents int64) string {
	b := make([]byte, 0, 24)
	if cents < 0 {
		b, cents = append(b, '-'), -cents
	}
	b = append(b, "R$\u00a0"...)
	b = appendThousands(b, cents/100)
	return string(append(b, ',', byte('0'+cents%100/10), byte('0'+cents%10)))
}

// brlCell is brl for a table's amount column: "R$" and the number may go
// on two lines there, where a narrow phone has no room for a large amount
// on one (the cell's class keeps it on one line where there is room).
func brlCell(cents int64) string { return strings.Replace(brl(cents), "\u00a0", " ", 1) }

func groupThousands(n int64) string { return string(appendThousands(nil, n)) }

// appendThousands appends n ≥ 0 with a dot between each group of three
// digits.
func appendThousands(b []byte, n int64) []byte {
	s := strconv.FormatInt(n, 10)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, '.')
		}
		b = append(b, s[i])
	}
	return b
}

// date writes the São Paulo calendar date: 10/12/2026.
func date(t time.Time) string { return t.In(parcela.SaoPaulo).Format("02/01/2006") }

// dateTime writes the São Paulo date and time: 10/12/2026 às 15:04.
func dateTime(t time.Time) string { return t.In(parcela.SaoPaulo).Format("02/01/2006 às 15:04") }

// dayOrTime writes a last instant: a day's end as its date, another with
// its time (a waiver ending mid-day, whose date alone read as the whole
// day to pay without the fine that came that afternoon).
func dayOrTime(t time.Time) string {
	if t.Equal(parcela.EndOfDay(t)) {
		return date(t)
	}
	return dateTime(t)
}

// dueWhen writes a bill's due date, with its time when the bill is
// payable only until that instant: a first bill to be paid by Pix or card
// falls due the charge plus its configuration's hours, 01/12/2026 às
// 01:25, and lapses then, where its date alone read as the whole day to
// pay. A bill payable through its day's end (an installment, a first bill
// of a boleto) shows its date.
func dueWhen(due, effective time.Time) string {
	if due.Equal(effective) && !due.Equal(parcela.EndOfDay(due)) {
		return dateTime(due)
	}
	return date(due)
}

// dateTimeFrom writes, as dateTime does, the first minute from which
// something refused until t is taken again: t rounded up to the minute.
// Rounded down, the page named a minute at which it was still refused.
func dateTimeFrom(t time.Time) string {
	if m := t.Truncate(time.Minute); m.Before(t) {
		t = m.Add(time.Minute)
	}
	return dateTime(t)
}

// percent writes a rate as a percentage with a decimal comma, its whole
// part grouped by thousands as money is (a CET can pass 1.000%), and every
// place it has (a rate has at most six): 0.0199 → 1,99%, 0.2 → 20%,
// 0.000001 → 0,0001%, 12.5 → 1.250%. Rounded, the page would disclose
// another rate than the plan charges, or none at all.
func percent(r parcela.Rate) string {
	whole, frac, hasFrac := strings.Cut(r.Decimal().Shift(2).String(), ".")
	sign := ""
	if w, ok := strings.CutPrefix(whole, "-"); ok {
		sign, whole = "-", w
	}
	if n, err := strconv.ParseInt(whole, 10, 64); err == nil { // beyond int64, as it is: no rate is
		whole = groupThousands(n)
	}
	if hasFrac {
		whole += "," + frac
	}
	return sign + whole + "%"
}

// timeLeft writes how long until t, for people: "2 dias e 3 h", "3 dias", "2 h 05 min",
// "12 min", or "expirado".
func timeLeft(now, t time.Time) string {
	d := t.Sub(now)
	switch {
	case d <= 0:
		return "expirado"
	case d >= 48*time.Hour && int(d.Hours())%24 == 0:
		return fmt.Sprintf("%d dias", int(d.Hours())/24)
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d dias e %d h", int(d.Hours())/24, int(d.Hours())%24)
	case d >= time.Hour:
		return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%d min", max(1, int(d.Minutes())))
}

// sellerDocument names a seller's document as printed, its label kept on
// the number's line by a no-break space: CNPJ 11.222.333/0001-81
// (alphanumeric ones too), or a sole seller's CPF 529.982.247-25.
func sellerDocument(doc string) string {
	switch len(doc) {
	case 14:
		return "CNPJ\u00a0" + doc[:2] + "." + doc[2:5] + "." + doc[5:8] + "/" + doc[8:12] + "-" + doc[12:]
	case 11:
		return "CPF\u00a0" + doc[:3] + "." + doc[3:6] + "." + doc[6:9] + "-" + doc[9:]
	}
	return doc
}

// formatCEP writes a CEP as 01310-100.
func formatCEP(s string) string {
	if len(s) != 8 {
		return s
	}
	return s[:5] + "-" + s[5:]
}

func itoa(n int) string { return strconv.Itoa(n) }

// plural writes a count (an int or an int64) with its noun: "1 parcela",
// "2 parcelas".
func plural(n any, one, many string) (string, error) {
	var c int64
	switch v := n.(type) {
	case int:
		c = int64(v)
	case int64:
		c = v
	default:
		return "", fmt.Errorf("plural of a %T", n)
	}
	return pluralOf(c, one, many), nil
}

// pluralOf writes n with the word that agrees with it: 1 dia, 3 dias.
func pluralOf(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}
