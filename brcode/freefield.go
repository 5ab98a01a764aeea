package brcode

import "fmt"

// FreeFieldCarteira is the collection wallet ("carteira") of parcela's
// simulated bank: registered simple collection.
const FreeFieldCarteira = "101"

// FreeField builds the 25-digit free field ("campo livre") of parcela's
// simulated bank. FEBRABAN leaves these positions (20–44 of the barcode) to
// the issuing bank; ours are:
//
//	free[0:3]   carteira      "101" (FreeFieldCarteira)
//	free[3:14]  nosso número  11 digits, zero-padded on the left
//	free[14:18] agência       4 digits
//	free[18:25] conta         7 digits (with its DV if it has one), zero-padded
//
// Inputs must be digits only; an agency of other than 4 digits, or a nosso
// número / account longer than its slot, is an error rather than being
// silently cut.
func FreeField(agency, nossoNumero, account string) (string, error) {
	if len(agency) != 4 || !isDigits(agency) {
		return "", fmt.Errorf("%w: agency %q must be 4 digits", ErrFormat, agency)
	}
	nn, err := padDigits("nosso número", nossoNumero, 11)
	if err != nil {
		return "", err
	}
	acc, err := padDigits("account", account, 7)
	if err != nil {
		return "", err
	}
	return FreeFieldCarteira + nn + agency + acc, nil
}

// padDigits left-pads a non-empty digit string with zeros to width.
func padDigits(name, s string, width int) (string, error) {
	if len(s) == 0 || len(s) > width || !isDigits(s) {
		return "", fmt.Errorf("%w: %s %q must be 1 to %d digits", ErrFormat, name, s, width)
	}
	return fmt.Sprintf("%0*s", width, s), nil
}
