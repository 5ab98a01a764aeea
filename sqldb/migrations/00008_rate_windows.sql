-- +goose Up
-- Request counts of rate-limited keys (a token, a client address) in fixed
-- windows, shared by every instance on the database: one row per key and
-- window, counted by an atomic upsert. Rows past expires_at are deleted.
CREATE TABLE rate_windows (
  bucket TEXT NOT NULL,
  window_start BIGINT NOT NULL,
  hits BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  PRIMARY KEY (bucket, window_start)
);
CREATE INDEX rate_windows_expiry ON rate_windows (expires_at);

-- +goose Down
DROP TABLE rate_windows;
