-- +goose Up
-- A boleto with settlement grace expired at its grace's last millisecond
-- (23:59:59.999 in São Paulo), where money settles a payment only before
-- its expires_at: a notice of a payment made in that millisecond, which the
-- pages showed the boleto taking, was refused. Its expiry is now the
-- millisecond after (parcela.BoletoExpiry), as a boleto's without grace
-- already was. A boleto's expires_at ends in 999 milliseconds only when it
-- was that last millisecond: every other one is 00:00:00.000. Events sent
-- before keep the expiry they carried.
UPDATE payments SET expires_at = expires_at + 1
WHERE payment_method = 'boleto' AND expires_at % 1000 = 999;

-- +goose Down
-- Nothing: an older binary reads a boleto expiring at 00:00:00.000 as it
-- reads one without grace.
