package parcela

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
)

// downBank is a payment provider that cannot be reached.
type downBank struct{ intentLog }

func (*downBank) Cancel(context.Context, CancelRequest) error { return errors.New("the bank is down") }

// A card approved just before a crash is voided by the intents' recovery
// through the provider wrapped by VoidingCards. The bank never saw the
// card, so its outage must not hold the payer's money: the card is voided
// at once, and the failure still fails the void, leaving the intent
// voiding for the recovery to ask the bank again. The card waited for the
// bank, up to the recovery's 6 h backoff.
func TestRecoveredCardIsVoidedWhileTheBankIsDown(t *testing.T) {
	t.Parallel()
	acq := &recordingAcquirer{}
	log := &intentLog{}
	s := &issuer{intents: log, provider: VoidingCards(&downBank{}, AcquirersByEnvironment{Sandbox: acq}), clock: NewTestClock(time.Now())}
	voided, err := s.void(context.Background(), Sandbox, "card-attempt")
	if err == nil || voided {
		t.Fatalf("void = %v, %v; want the bank's failure", voided, err)
	}
	if len(acq.voided) != 1 || acq.voided[0].PaymentID != "card-attempt" {
		t.Fatalf("the acquirer voided %v; want the card attempt", acq.voided)
	}
	if want := []string{"start void"}; !slices.Equal(log.steps, want) {
		t.Fatalf("steps %v, want %v: the intent stays voiding, to be retried", log.steps, want)
	}
}
