-- +goose Up
-- A bill's card attempts in flight, counted with its refused card payments
-- before another attempt is sent to the acquirer (RecordCardIntent).
CREATE INDEX payment_intents_card_issuing ON payment_intents (bill_id) WHERE state = 'issuing' AND payment_method = 'credit_card';

-- +goose Down
DROP INDEX payment_intents_card_issuing;
