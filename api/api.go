// Package api holds the contract of parcela's external API: the OpenAPI 3.0
// document (openapi.yaml, served at GET /openapi.yaml), the copy of it each
// listener serves, and a Contract that checks requests and responses against
// it under a strict reading. The document is the only source of the wire
// format: the Go client (package client) is generated from it.
package api

import _ "embed"

// Spec is the OpenAPI document, byte for byte as in openapi.yaml.
//
//go:embed openapi.yaml
var Spec []byte
