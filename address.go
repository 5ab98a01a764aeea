package parcela

import "time"

// State is a Brazilian federative unit, from the IBGE table.
type State struct {
	ID        string
	IBGECode  int
	Name      string
	Acronym   string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// City is an IBGE municipality.
type City struct {
	ID        string
	IBGECode  string
	Name      string
	State     State
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Address is a postal address in Brazil.
type Address struct {
	ID           string
	Zipcode      string
	Street       string
	Number       string
	Complement   *string
	Neighborhood string
	City         City
	CreatedAt    time.Time
	UpdatedAt    time.Time
}
