// Package api holds the contract of parcela's external API: the OpenAPI 3.0
// document (openapi.yaml, served at GET /openapi.yaml), the Go models
// generated from it (types.gen.go) for clients and tests, and a Contract that
// checks requests and responses against the document.
package api

import _ "embed"

//go:generate go tool oapi-codegen -config oapi-codegen.yaml openapi.yaml

// Spec is the OpenAPI document, byte for byte as in openapi.yaml.
//
//go:embed openapi.yaml
var Spec []byte
