// Package webhook is the transport for parcela's at-least-once webhooks:
// Standard Webhooks signing (sign.go), an HTTP sender that refuses to reach
// internal addresses (address.go, sender.go) and the retry schedule
// (retry.go). It knows nothing about the database or the job queue: the
// caller loads a delivery, calls Send, records the Result and, on failure,
// asks RetryDelay when to try again.
package webhook
