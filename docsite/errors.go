package docsite

// Problem is one entry of the error catalogue: a problem code the API can
// answer with, its HTTP status, and what a client should know about it. The
// anchor of its entry at /docs/errors is the code itself, so a problem's
// type links here.
type Problem struct {
	Code, Title string
	Status      int
	Cause, Fix  string
}

// Problems is every problem code the API returns, in status order. A test
// proves that every code the server can emit is here, with its status.
var Problems = []Problem{
	{"malformed_request", "Malformed request", 400,
		"The request could not be read: the body is not valid JSON or not a JSON object, is not UTF-8, holds two values, repeats a key or spells a key in the wrong case (`Amount_Cents`); a value has the wrong JSON type (`\"installments\": \"4\"`); or a query parameter has the wrong type (`per_page=ten`, a date not in `YYYY-MM-DD`), is sent twice (`status=paid&status=pending`), or sits in a listing's query that is not URL-encoded `name=value` pairs joined by `&` (`status=paid;page=2`); or a listing's query has a parameter the listing does not take (`due_date_from` for `due_date_start`: a misspelt filter would otherwise list everything), named in `errors[]` with the code `not_allowed`. `errors[]` names the field when one is at fault.",
		"Send one JSON object with the keys spelled exactly as documented, each once, and values of the documented types. Fix the request before retrying: the same request fails the same way."},
	{"unauthorized", "Unauthorized", 401,
		"The `Authorization: Bearer` header is missing, or its token is unknown, revoked, or belongs to the other environment (a `sandbox_` token on the production listener or the reverse).",
		"Send `Authorization: Bearer <token>` with a live token of this listener's environment. Tokens are shown once when the operator creates them; ask for a new one if it was lost or revoked."},
	{"not_found", "Not found", 404,
		"No such path, or no such resource for your company and environment. Another company's id, and an id from the other environment, are answered exactly like ids that do not exist. The sandbox-only operations are 404 on production.",
		"Check the id and that it was created with a token of the same company and environment (sandbox ids do not exist in production). The bill listing's filters (`billing_id`, `order_id`) never answer 404: an unknown id there simply matches nothing. The delivery log's `webhook_id` does: it must name a webhook of your company and environment (a deleted one's log is kept)."},
	{"method_not_allowed", "Method not allowed", 405,
		"The path exists, but not with this HTTP method.",
		"Use one of the methods listed in the `Allow` header of the answer."},
	{"conflict", "Conflict", 409,
		"Concurrent requests kept changing what this request needed, round after round, and it gave up having done nothing. A request that loses a race to one that moved the resource on (two charges of one order at once: the second finds it charged) is `invalid_state`, not this.",
		"Retry after a short wait, with the same `Idempotency-Key`: nothing was done and nothing was stored for the key, so the retry runs for real. The Go client does this by itself."},
	{"invalid_state", "Invalid state", 409,
		"The resource's status does not allow this move: charging an order that is not `pending`, canceling a finished billing, waiving the penalties of a paid bill, paying an expired payment in the sandbox, retrying a delivery of a disabled webhook.",
		"Read the resource, check its `status` against the lifecycle in the payments guide, and only then act. Repeating the request does not help."},
	{"idempotency_in_flight", "Request in flight", 409,
		"A request with the same `Idempotency-Key` is still being processed.",
		"Wait a moment and retry with the same key and body: once the first request finishes, the retry gets its stored answer. The Go client does this by itself."},
	{"payload_too_large", "Payload too large", 413,
		"The request body is over 1 MiB.",
		"Send a smaller body: no request of this API needs more (product metadata is at most 16 KiB)."},
	{"unsupported_media_type", "Unsupported media type", 415,
		"A body was sent without `Content-Type: application/json`.",
		"Send bodies as JSON with `Content-Type: application/json`."},
	{"validation_failed", "Validation failed", 422,
		"The request is well formed but breaks a rule. `errors[]` lists every broken field at once, each with its path (`payment_configurations[1].interest_rate`, `installments`, `Idempotency-Key`), a field code (below) and a message. It is empty when the rule is the request's as a whole, not one field's (a company's 26th webhook): `detail` says which.",
		"Correct every field listed in `errors[]`; the message says what the rule is. Rules that depend on the company (maximum interest rate, maximum installments, minimum down payment) are set by the operator."},
	{"credit_card_not_supported", "Credit card not supported", 422,
		"A charge asked for `payment_method: credit_card`. Card payments are not made through the API.",
		"Charge with `boleto` or `pix`, or send the customer to the bill's `checkout_url`, where the hosted checkout page takes cards; the card payment then appears among the bill's payments."},
	{"idempotency_key_reused", "Idempotency key reused", 422,
		"An `Idempotency-Key` already used in the last 24 hours came with a different method, path or body.",
		"Use a new key for every new request, and the same key only to retry the very same request."},
	{"rate_limited", "Too many requests", 429,
		"This token sent more requests per second than its limit (by default 100 in production, 25 in the sandbox); or this client address sent too many requests without a valid token (10 a second) or for payment images (20 a second).",
		"Wait the seconds given in `Retry-After`, then retry; spread bursts out. The Go client honours `Retry-After` by itself. Check the token when the requests had none, or a wrong one."},
	{"internal_error", "Internal error", 500,
		"An unexpected failure on the server. Nothing internal is disclosed.",
		"Retry later with the same `Idempotency-Key` (the failed attempt was not stored, so the retry runs for real). If it persists, contact support quoting `request_id`."},
	{"unavailable", "Service unavailable", 503,
		"The service cannot take the request now: the database cannot be reached or takes no writes (a full disk, a read-only database), the server is overloaded, or production has no payment provider configured.",
		"Retry after the seconds given in `Retry-After` (or with backoff when it is absent), with the same `Idempotency-Key`. When `detail` says no payment provider is configured, no retry helps until the operator configures one: alert on it rather than retrying for long."},
}

// FieldCode is a code of one item of a problem's errors[]: which rule a
// field broke. Their anchors are "field-" + the code, as some codes are
// problem codes too.
type FieldCode struct{ Code, Meaning string }

// FieldCodes is every field code the API uses; a test proves none is missing.
var FieldCodes = []FieldCode{
	{"required", "The field is missing (or empty) and the request needs it."},
	{"too_small", "A number below its minimum, or a list with too few items."},
	{"too_large", "A number above its maximum (an amount over the product's, more installments than allowed, `per_page` over 1000 for bills or 100 for products, offers and deliveries), or a list or object over its size."},
	{"too_long", "A string over its maximum length (names 255 characters, `Idempotency-Key` 255, webhook `url` 2048)."},
	{"invalid", "A value of the right type but the wrong form or outside the allowed set: a date not in `YYYY-MM-DD`, a CPF with wrong check digits, an unknown enum value, an address that is not absolute http(s)."},
	{"invalid_type", "A JSON value of the wrong type: a string where a number belongs, an object where a list does."},
	{"not_found", "An id in the body that names nothing of this company and environment (an offer, product or payment configuration)."},
	{"not_allowed", "A field or value that this context does not take: financing fields on an upfront configuration, a payment method the configuration does not accept, `enabled` on creation, changing a webhook's entity."},
	{"not_sellable", "The offer cannot be sold now: disabled, past its `expires_at`, or out of seats."},
	{"in_past", "A moment that must be in the future is not (an offer's `expires_at`)."},
	{"taken", "A value that must be unique is already used (a company's slug, in the operator's commands)."},
	{"credit_card_not_supported", "The charge asked for a card; see the problem code of the same name."},
	{"unsupported_brand", "The checkout's card form: a card of a brand the acquirer does not take (it takes Visa, Mastercard, Elo, American Express and Hipercard)."},
	{"expired", "The checkout's card form: the card's expiry month has passed."},
	{"other_state", "The offer page's form: the zipcode belongs to another state than the chosen city's."},
	{"unavailable", "The offer page's form: the list of cities could not be read; try again."},
}
