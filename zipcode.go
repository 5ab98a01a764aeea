package parcela

// zipcodeRanges are the CEP ranges of each state (UF), by the Correios'
// table: the first five digits, inclusive.
var zipcodeRanges = map[string][][2]int{
	"SP": {{1000, 19999}},
	"RJ": {{20000, 28999}},
	"ES": {{29000, 29999}},
	"MG": {{30000, 39999}},
	"BA": {{40000, 48999}},
	"SE": {{49000, 49999}},
	"PE": {{50000, 56999}},
	"AL": {{57000, 57999}},
	"PB": {{58000, 58999}},
	"RN": {{59000, 59999}},
	"CE": {{60000, 63999}},
	"PI": {{64000, 64999}},
	"MA": {{65000, 65999}},
	"PA": {{66000, 68899}},
	"AP": {{68900, 68999}},
	"AM": {{69000, 69299}, {69400, 69899}},
	"RR": {{69300, 69399}},
	"AC": {{69900, 69999}},
	"DF": {{70000, 72799}, {73000, 73699}},
	"GO": {{72800, 72999}, {73700, 76799}},
	"RO": {{76800, 76999}, {78900, 78999}}, // 789xx is Rondônia's former range, still on old addresses
	"TO": {{77000, 77999}},
	"MT": {{78000, 78899}},
	"MS": {{79000, 79999}},
	"PR": {{80000, 87999}},
	"SC": {{88000, 89999}},
	"RS": {{90000, 99999}},
}

// zipcodePrefix is the first five digits of an 8-digit CEP, or -1.
func zipcodePrefix(zipcode string) int {
	if len(zipcode) != 8 || !isDigits(zipcode) {
		return -1
	}
	n := 0
	for _, c := range zipcode[:5] {
		n = n*10 + int(c-'0')
	}
	return n
}

// ZipcodeInState reports whether the 8-digit zipcode lies in a range of the
// state whose acronym is uf.
func ZipcodeInState(zipcode, uf string) bool {
	p := zipcodePrefix(zipcode)
	for _, r := range zipcodeRanges[uf] {
		if p >= r[0] && p <= r[1] {
			return true
		}
	}
	return false
}

// validZipcode reports whether zipcode is 8 digits in some state's range
// (00000-000 to 00999-999 belong to none).
func validZipcode(zipcode string) bool { return zipcodePrefix(zipcode) >= 1000 }

// CheckZipcodeState refuses an address whose zipcode is outside the state
// of its city (a.City.State, loaded by the caller that resolved
// city_ibge_code), as a validation error on field, e.g.
// "order.address.zipcode".
func CheckZipcodeState(field string, a *Address) error {
	var v Validation
	checkZipcodeState(&v, field, a)
	return v.Err()
}

// checkZipcodeState is CheckZipcodeState adding its error to v.
func checkZipcodeState(v *Validation, field string, a *Address) {
	if !ZipcodeInState(a.Zipcode, a.City.State.Acronym) {
		v.Add(field, "invalid", "is not a zipcode of "+a.City.Name+" ("+a.City.State.Acronym+"): the state's zipcodes do not include it")
	}
}
