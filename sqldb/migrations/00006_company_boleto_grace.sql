-- +goose Up
-- How many business days after its last payable day a boleto waits for the
-- bank's notice of payment before it expires (0 to 5, default 1).
ALTER TABLE companies ADD COLUMN boleto_grace_business_days INTEGER NOT NULL DEFAULT 1
  CHECK (boleto_grace_business_days BETWEEN 0 AND 5);

-- +goose Down
ALTER TABLE companies DROP COLUMN boleto_grace_business_days;
