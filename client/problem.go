package client

import (
	"errors"
	"fmt"
)

// Error makes a problem answer an error: every method of a Client returns
// a *Problem when the API answers 4xx or 5xx (after any retries), wrapped
// with its Idempotency-Key (IdempotencyKeyOf) when an earlier attempt may
// have been done unanswered; errors.As finds it either way.
//
//	var p *client.Problem
//	if errors.As(err, &p) && p.Code == "validation_failed" {
//		for _, f := range p.Fields() { … }
//	}
//
// Branch on Code (documented at /docs/errors), not on Title or Detail.
func (p *Problem) Error() string {
	msg := fmt.Sprintf("parcela: %d", p.Status)
	if p.Code != "" {
		msg += " " + p.Code
	}
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	if p.RequestId != "" {
		msg += " (request " + p.RequestId + ")"
	}
	return msg
}

// Fields is the list of fields at fault of a validation problem, empty for
// other problems.
func (p *Problem) Fields() []ProblemFieldError {
	if p.Errors == nil {
		return nil
	}
	return *p.Errors
}

// ProblemCode returns the problem code of err ("not_found",
// "validation_failed"…), or "" when err is not a problem answer.
func ProblemCode(err error) string {
	var p *Problem
	if errors.As(err, &p) {
		return p.Code
	}
	return ""
}
