-- +goose Up
-- A bank's notice of a settlement, by the bank's id of it (a Pix's
-- end-to-end id): applied once per company and environment, so a notice
-- delivered again changes nothing.
CREATE TABLE settlement_notices (
    company_id        TEXT   NOT NULL,
    environment       TEXT   NOT NULL,
    notice_id         TEXT   NOT NULL,
    payment_id        TEXT   NOT NULL REFERENCES payments (id),
    paid_amount_cents BIGINT NOT NULL,
    paid_at           BIGINT NOT NULL,
    created_at        BIGINT NOT NULL,
    PRIMARY KEY (company_id, environment, notice_id)
);

-- +goose Down
DROP TABLE settlement_notices;
