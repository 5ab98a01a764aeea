package api

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// CheckStrict enforces what a strict OpenAPI 3.0 reader requires and lenient
// ones let pass. In 3.0, nullable adds null to the values its sibling type
// allows, so:
//
//   - nullable needs a type beside it: beside a bare allOf or $ref it means
//     nothing (strict readers reject it, lenient ones guess);
//   - a nullable enum must list null among its values, or null is still
//     refused by the enum.
func CheckStrict(doc []byte) error {
	var root any
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return fmt.Errorf("api: reading the document: %w", err)
	}
	var problems []string
	walkStrict(root, "#", &problems)
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return errors.New("api: not strict OpenAPI 3.0: " + strings.Join(problems, "; "))
}

func walkStrict(v any, at string, problems *[]string) {
	switch v := v.(type) {
	case map[string]any:
		if v["nullable"] == true {
			if _, typed := v["type"]; !typed {
				*problems = append(*problems, at+": nullable without type")
			}
			if enum, ok := v["enum"].([]any); ok && !containsNil(enum) {
				*problems = append(*problems, at+": nullable enum without null")
			}
		}
		for k, child := range v {
			if k == "example" || k == "examples" {
				continue // example values are data, not schemas
			}
			walkStrict(child, at+"/"+strings.ReplaceAll(k, "/", "~1"), problems)
		}
	case []any:
		for i, child := range v {
			walkStrict(child, fmt.Sprintf("%s/%d", at, i), problems)
		}
	}
}

func containsNil(values []any) bool {
	for _, v := range values {
		if v == nil {
			return true
		}
	}
	return false
}
