package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"parcela"
)

// A sweep's failed rows are logged by id and counted, and fail nothing
// else: the job succeeds. Only the sweep itself failing fails the job.
func TestSweepWorkerReportsFailedRows(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	d := &deps{log: slog.New(slog.NewJSONHandler(&logs, nil)), sweepFailures: newSweepFailures(reg)}
	row := parcela.DueRow{Owned: parcela.Owned{ID: "payment-1", Auth: parcela.Auth{CompanyID: "company-1", Environment: parcela.Sandbox}}, BillID: "bill-1"}
	report := parcela.SweepReport{Moved: 2, Failed: []parcela.SweepFailure{{Sweep: parcela.SweepIssueInstallments, Row: row, Failures: 3,
		Retry: time.Date(2027, 1, 12, 10, 16, 0, 0, parcela.SaoPaulo), Err: errors.New("brcode: Pix merchant name is empty")}}}
	var sweepErr error
	w := &sweepWorker[IssueInstallmentsArgs]{deps: d, what: "installment payments issued",
		sweep: func(context.Context) (parcela.SweepReport, error) { return report, sweepErr }}

	if err := w.Work(context.Background(), nil); err != nil {
		t.Fatalf("a row's failure failed the job: %v", err)
	}
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, "retried later") {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	if line["sweep"] != "issue_installments" || line["id"] != "payment-1" || line["bill_id"] != "bill-1" || line["company_id"] != "company-1" ||
		line["failures"] != float64(3) || line["level"] != "WARN" || !strings.Contains(line["error"].(string), "merchant name") {
		t.Fatalf("failure logged as %v\n%s", line, logs.String())
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var counted []string
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if m.GetCounter().GetValue() == 0 {
				continue // every sweep is exported from the start
			}
			counted = append(counted, fmt.Sprintf("%s{%s=%s} %v", f.GetName(), m.GetLabel()[0].GetName(), m.GetLabel()[0].GetValue(), m.GetCounter().GetValue()))
		}
	}
	if want := "parcela_sweep_failures_total{sweep=issue_installments} 1"; len(counted) != 1 || counted[0] != want {
		t.Fatalf("metrics %v, want %s", counted, want)
	}

	sweepErr = errors.New("select installments to issue: connection refused")
	if err := w.Work(context.Background(), nil); !errors.Is(err, sweepErr) {
		t.Fatalf("the sweep's own failure: %v", err)
	}
}

// Every sweep's failure count is exported from the start, at 0, so the
// operations listener shows parcela_sweep_failures_total before a failure.
func TestSweepFailuresExportedBeforeAnyFailure(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	newSweepFailures(reg)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "parcela_sweep_failures_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			exported[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	for _, sweep := range []string{parcela.SweepExpirePayments, parcela.SweepMarkOverdue, parcela.SweepIssueInstallments,
		parcela.SweepRecoverIntents, parcela.SweepLapseFirstBills} { // each sweep's own name, not SweepNames: a name left out of it fails
		if v, ok := exported[sweep]; !ok || v != 0 {
			t.Errorf("sweep %s: exported %v (%v)", sweep, ok, v)
		}
	}
}

// Every delivery outcome is exported from the start, at 0, where each
// appeared only at its first attempt: an alert on blocked deliveries had
// nothing to read until one was blocked.
func TestDeliveryOutcomesExportedBeforeAnyAttempt(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	newDeliveryMetrics(reg, &fakeDeliveries{})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range families {
		if f.GetName() == "parcela_webhook_deliveries_total" {
			for _, m := range f.GetMetric() {
				exported[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue() == 0
			}
		}
	}
	for _, o := range []string{"delivered", "retry", "gone", "blocked", "skipped", "deferred"} {
		if !exported[o] {
			t.Errorf("outcome %s not exported at 0: %v", o, exported)
		}
	}
}
