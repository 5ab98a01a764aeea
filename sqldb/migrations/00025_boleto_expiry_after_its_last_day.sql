-- +goose Up
-- A boleto with settlement grace expired at its grace's last millisecond
-- (23:59:59.999 in São Paulo), where money settles a payment only before
-- its expires_at: a notice of a payment made in that millisecond, which the
-- pages showed the boleto taking, was refused. Its expiry is now the
-- millisecond after (parcela.BoletoExpiry), as a boleto's without grace
-- already was. A boleto's expires_at ends in 999 milliseconds only when it
-- was that last millisecond: every other one is 00:00:00.000. A paid one
-- settles nothing more and is left as it is, and events sent before keep
-- the expiry they carried. An instance of an older release still serving
-- beside a migrated one (a rolling upgrade on PostgreSQL) issues boletos
-- the old way until it is replaced; those keep the old expiry.
UPDATE payments SET expires_at = expires_at + 1
WHERE payment_method = 'boleto' AND status <> 'paid' AND expires_at % 1000 = 999;

-- +goose Down
-- Nothing: an older binary reads a boleto expiring at 00:00:00.000 as it
-- reads one without grace.
