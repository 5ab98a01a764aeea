package brcode

import (
	"fmt"
	"strconv"
	"strings"
)

// PixCode is a BR Code read back by ParsePix.
type PixCode struct {
	Fields       map[string]string // every top-level ID → value, as written
	Key          string            // 26-01 of the Pix template, if present
	URL          string            // 26-25 of the Pix template, if present
	MerchantName string            // 59
	MerchantCity string            // 60
	AmountCents  int64             // 54; 0 when the code carries no amount
	TxID         string            // 62-05; "***" means none
}

type tlvField struct{ id, value string }

// ParsePix reads a BR Code: it checks the CRC (tag 63, last), the TLV
// structure (IDs and lengths, no duplicate top-level IDs), the payload
// format indicator (00 = "01", first) and that a merchant account template
// (IDs 26–51) carries the Pix GUI. Lengths count characters, as EMV does.
func ParsePix(code string) (PixCode, error) {
	fields, err := parseTLVs(code)
	if err != nil {
		return PixCode{}, err
	}
	last := fields[len(fields)-1]
	if last.id != "63" || len(last.value) != 4 {
		return PixCode{}, fmt.Errorf("%w: BR Code must end with the CRC field 6304", ErrFormat)
	}
	body := code[:len(code)-4]
	if got := fmt.Sprintf("%04X", CRC16([]byte(body))); !strings.EqualFold(got, last.value) {
		return PixCode{}, fmt.Errorf("%w: BR Code CRC is %s, computed %s", ErrCheckDigit, last.value, got)
	}
	if fields[0].id != "00" || fields[0].value != "01" {
		return PixCode{}, fmt.Errorf("%w: BR Code must start with payload format 000201", ErrFormat)
	}
	pc := PixCode{Fields: make(map[string]string, len(fields))}
	for _, f := range fields {
		if _, dup := pc.Fields[f.id]; dup {
			return PixCode{}, fmt.Errorf("%w: BR Code repeats field %s", ErrFormat, f.id)
		}
		pc.Fields[f.id] = f.value
	}
	if err := pc.readPixAccount(fields); err != nil {
		return PixCode{}, err
	}
	if v, ok := pc.Fields["54"]; ok {
		if pc.AmountCents, err = parsePixAmount(v); err != nil {
			return PixCode{}, err
		}
	}
	pc.MerchantName, pc.MerchantCity = pc.Fields["59"], pc.Fields["60"]
	if v, ok := pc.Fields["62"]; ok {
		sub, err := subFields(v)
		if err != nil {
			return PixCode{}, err
		}
		pc.TxID = sub["05"]
	}
	return pc, nil
}

// readPixAccount finds the merchant account template whose GUI is the Pix
// one (it is 26 in codes we write, but EMV allows any ID from 26 to 51).
func (pc *PixCode) readPixAccount(fields []tlvField) error {
	for _, f := range fields {
		if id, _ := strconv.Atoi(f.id); id < 26 || id > 51 {
			continue
		}
		sub, err := subFields(f.value)
		if err != nil {
			return err
		}
		if strings.EqualFold(sub["00"], pixGUI) {
			pc.Key, pc.URL = sub["01"], sub["25"]
			return nil
		}
	}
	return fmt.Errorf("%w: BR Code has no merchant account with GUI %s", ErrFormat, pixGUI)
}

// parseTLVs splits s into ID(2) + length(2) + value objects, counting
// characters rather than bytes.
func parseTLVs(s string) ([]tlvField, error) {
	r := []rune(s)
	var out []tlvField
	for i := 0; i < len(r); {
		if len(r)-i < 4 {
			return nil, fmt.Errorf("%w: BR Code truncated at character %d", ErrFormat, i)
		}
		id, ln := string(r[i:i+2]), string(r[i+2:i+4])
		if !isDigits(id) || !isDigits(ln) {
			return nil, fmt.Errorf("%w: bad BR Code field header %q at character %d", ErrFormat, id+ln, i)
		}
		n, _ := strconv.Atoi(ln)
		if i+4+n > len(r) {
			return nil, fmt.Errorf("%w: BR Code field %s overruns the code", ErrFormat, id)
		}
		out = append(out, tlvField{id, string(r[i+4 : i+4+n])})
		i += 4 + n
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty BR Code", ErrFormat)
	}
	return out, nil
}

func subFields(s string) (map[string]string, error) {
	fields, err := parseTLVs(s)
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		m[f.id] = f.value
	}
	return m, nil
}

// parsePixAmount reads "123", "123.4" or "123.45" into cents, without
// floating point.
func parsePixAmount(s string) (int64, error) {
	whole, frac, hasDot := strings.Cut(s, ".")
	if !isDigits(whole) || len(whole) > 10 || (hasDot && (len(frac) < 1 || len(frac) > 2 || !isDigits(frac))) {
		return 0, fmt.Errorf("%w: BR Code amount %q", ErrFormat, s)
	}
	cents, _ := strconv.ParseInt(whole, 10, 64)
	cents *= 100
	if hasDot {
		f, _ := strconv.ParseInt(frac, 10, 64)
		if len(frac) == 1 {
			f *= 10
		}
		cents += f
	}
	return cents, nil
}
