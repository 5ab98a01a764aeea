package web

import (
	"slices"
	"strings"

	"parcela"
)

// The domain names fields and codes in English for the API; the pages say
// them in Portuguese. A field's message is chosen by its code, falling back
// to a generic one for the field, so a rule added to the domain later still
// shows next to its field.

// formField maps the domain's field names to the offer form's inputs.
var formField = map[string]string{
	"order.customer_name":          "name",
	"order.customer_document":      "cpf",
	"order.customer_birthdate":     "birthdate",
	"order.email":                  "email",
	"order.phone":                  "phone",
	"order.address":                "cep",
	"order.address.zipcode":        "cep",
	"order.address.street":         "street",
	"order.address.number":         "number",
	"order.address.complement":     "complement",
	"order.address.neighborhood":   "neighborhood",
	"order.address.city_ibge_code": "city",
	"address.city_ibge_code":       "city",
	"address.zipcode":              "cep",
	"state":                        "state", // the page's own field: the order names a city, not its state
	"customer_birthdate":           "birthdate",
	"payment_configuration_id":     "option",
	"payment.payment_method":       "option",
	"installments":                 "installments",
	"due_day":                      "due_day",
	"card.number":                  "card_number",
	"card.holder_name":             "card_name",
	"card.expiry":                  "card_expiry",
	"card.cvv":                     "card_cvv",
	"card.installments":            "card_installments",
	"signature.remote_ip":          "",
	"signature.user_agent":         "",
	"order.offer_id":               "",
	"offer":                        "",
}

// fieldMessages are the messages of one input, by the domain's code; "" is
// the input's fallback.
var fieldMessages = map[string]map[string]string{
	"name":         {"required": "Informe seu nome completo.", "": "Confira o nome."},
	"cpf":          {"required": "Informe seu CPF.", "invalid": "CPF inválido: confira os 11 números.", "": "Confira o CPF."},
	"birthdate":    {"required": "Informe sua data de nascimento.", "invalid": "Informe uma data de nascimento válida, no passado.", "": "Confira a data de nascimento."},
	"email":        {"required": "Informe seu e-mail.", "invalid": "Informe um e-mail como nome@exemplo.com.", "": "Confira o e-mail."},
	"phone":        {"required": "Informe um telefone com DDD.", "invalid": "Informe o telefone com DDD: 10 ou 11 números.", "": "Confira o telefone."},
	"cep":          {"required": "Informe o CEP.", "invalid": "Confira o CEP: 8 números de um CEP que existe.", "other_state": "Este CEP não é do estado escolhido.", "": "Confira o CEP."},
	"street":       {"required": "Informe a rua.", "": "Confira a rua."},
	"number":       {"required": "Informe o número (ou S/N).", "": "Confira o número."},
	"complement":   {"": "Confira o complemento."},
	"neighborhood": {"required": "Informe o bairro.", "": "Confira o bairro."},
	"state":        {"required": "Escolha o estado.", "": "Escolha o estado na lista."},
	"city":         {"required": "Escolha a cidade.", "": "Escolha a cidade na lista."},
	"option": {"required": "Escolha uma forma de pagamento.", "under_age": "O parcelamento é só para maiores de 18 anos; escolha pagar à vista.",
		"under_age_financed_only": "O parcelamento é só para maiores de 18 anos, e esta oferta só é vendida parcelada.",
		"":                        "Esta forma de pagamento não está disponível; escolha outra."},
	// Past its bounds or below the smallest installment, a count the list
	// did not offer (a page left open while the offer changed): the list
	// shown again has the counts that are.
	"installments": {"": "Escolha um número de parcelas da lista."},
	"due_day":      {"": "Escolha um dia de vencimento entre 1 e 31."},
	"card_number": {"required": "Informe o número do cartão.", "unsupported_brand": "Aceitamos Visa, Mastercard, Elo, American Express e Hipercard.",
		"": "Número de cartão inválido: confira os números."},
	"card_name":         {"required": "Informe o nome impresso no cartão.", "": "Confira o nome impresso no cartão."},
	"card_expiry":       {"expired": "Este cartão está vencido.", "": "Informe o mês e o ano de validade."},
	"card_cvv":          {"required": "Informe o código de segurança.", "": "Código de segurança inválido: 3 números no verso (4 na frente, no American Express)."},
	"card_installments": {"": "Escolha o número de parcelas da lista."},
}

// fieldOfInput is the domain's name of a form input (formField's key for
// it, the order's own first), or the input's name when it has none.
func fieldOfInput(input string) string {
	rank := func(field string) string { // the order's fields first, then by name
		if strings.HasPrefix(field, "order.") {
			return "0" + field
		}
		return "1" + field
	}
	best := ""
	for field, in := range formField {
		if in == input && (best == "" || rank(field) < rank(best)) {
			best = field
		}
	}
	if best == "" {
		return input
	}
	return best
}

// fieldMessage says in Portuguese what is wrong with input (a form input
// name) given the domain's code.
func fieldMessage(input, code string) string {
	m := fieldMessages[input]
	if msg, ok := m[code]; ok {
		return msg
	}
	if code == "too_long" {
		return "Texto longo demais: encurte-o."
	}
	if msg, ok := m[""]; ok {
		return msg
	}
	return "Confira este campo."
}

// formErrors turns the domain's field errors into messages by input; those
// with no input of their own are collected in general.
func formErrors(fields []parcela.FieldError) (byInput map[string]string, general []string) {
	byInput = map[string]string{}
	for _, f := range fields {
		input, known := formField[f.Field]
		if !known {
			input = formField[knownSuffix(f.Field)]
		}
		if input == "" {
			general = append(general, generalMessage(f))
			continue
		}
		if _, seen := byInput[input]; !seen {
			byInput[input] = fieldMessage(input, f.Code)
		}
	}
	return byInput, general
}

// knownSuffix finds the known field that field ends with, so a field the
// domain nests one level deeper still lands on its input.
func knownSuffix(field string) string {
	for known := range formField {
		if len(field) > len(known) && field[len(field)-len(known)-1:] == "."+known {
			return known
		}
	}
	return field
}

func generalMessage(f parcela.FieldError) string {
	switch f.Field {
	case "offer", "order.offer_id":
		return "Esta oferta não está mais à venda."
	case "signature", "signature.remote_ip", "signature.user_agent":
		return "Não conseguimos registrar o aceite da compra a partir deste navegador. Tente novamente."
	}
	return "Não foi possível concluir: confira os dados e tente novamente."
}

// refusalMessages say why a card was refused and what to do.
var refusalMessages = map[string]string{
	parcela.RefusedCardDeclined:    "O banco emissor recusou o cartão. Tente outro cartão ou fale com seu banco.",
	parcela.RefusedExpiredCard:     "O banco informa que o cartão está vencido. Tente outro cartão.",
	parcela.RefusedInvalidCVV:      "O código de segurança não confere. Confira o código e tente de novo.",
	parcela.RefusedSuspectedFraud:  "O banco emissor bloqueou a compra por segurança. Fale com seu banco ou tente outro cartão.",
	parcela.RefusedProcessingError: "Não conseguimos processar o cartão agora. Tente de novo em instantes.",
}

// refusalMessage says why a card was refused; one refused for its funds
// points at the page's other ways to pay, methods, when it has any (a
// card-only bill was told to pay with Pix or boleto it did not offer).
func refusalMessage(reason *string, methods []string) string {
	if reason != nil && *reason == parcela.RefusedInsufficientFunds {
		return "Saldo ou limite insuficiente. Tente outro cartão" + orPayWith(methods) + "."
	}
	if reason != nil {
		if m, ok := refusalMessages[*reason]; ok {
			return m
		}
	}
	return refusalMessages[parcela.RefusedCardDeclined]
}

// payWith names the ways besides a card among methods: "Pix ou boleto",
// "Pix", "boleto", or "" for none.
func payWith(methods []string) string {
	pix, boleto := slices.Contains(methods, parcela.MethodPix), slices.Contains(methods, parcela.MethodBoleto)
	switch {
	case pix && boleto:
		return "Pix ou boleto"
	case pix:
		return "Pix"
	case boleto:
		return "boleto"
	}
	return ""
}

// orPayWith is " ou pague com " and payWith(methods), or "" for none.
func orPayWith(methods []string) string {
	if w := payWith(methods); w != "" {
		return " ou pague com " + w
	}
	return ""
}

// notPayableMessages say why a bill offers no way to pay.
var notPayableMessages = map[string]string{
	parcela.NotPayableBillPaid:           "Esta cobrança já está paga. Obrigado!",
	parcela.NotPayableBillCanceled:       "Esta cobrança foi cancelada e não pode mais ser paga.",
	parcela.NotPayableBillingCanceled:    "Este parcelamento foi cancelado; nada mais precisa ser pago.",
	parcela.NotPayableBillingFinished:    "Este parcelamento já foi quitado.",
	parcela.NotPayableDownPaymentPending: "Esta parcela só pode ser paga depois da entrada.",
	parcela.NotPayableFirstBillLapsed:    "O prazo para pagar esta cobrança acabou. Se você já pagou, a confirmação aparece aqui assim que o banco avisar; se não, o pedido será cancelado.",
}

// noMethodHere says why an open bill offers no way to pay on this
// listener: its only method is a card, and no acquirer serves the
// environment (a bill made while one did, opened after).
const noMethodHere = "Esta cobrança não pode ser paga por aqui no momento. Fale com o vendedor."

// Status labels.
var (
	orderStatus = map[string]string{
		parcela.OrderPending: "Aguardando pagamento", parcela.OrderInProgress: "Em andamento",
		parcela.OrderFinished: "Pago", parcela.OrderCanceled: "Cancelado",
	}
	billStatus = map[string]string{
		parcela.BillPending: "A vencer", parcela.BillPaid: "Paga", parcela.BillOverdue: "Vencida", parcela.BillCanceled: "Cancelada",
	}
	// lapsedStatus is a first bill's past its time to pay, not yet
	// canceled (Bill.NotPayableAt).
	lapsedStatus  = "Prazo encerrado"
	paymentStatus = map[string]string{
		parcela.PaymentUnpaid: "Aguardando pagamento", parcela.PaymentPaid: "Pago", parcela.PaymentExpired: "Expirado",
		parcela.PaymentCanceled: "Cancelado", parcela.PaymentRefused: "Recusado",
	}
	methodNames = map[string]string{
		parcela.MethodPix: "Pix", parcela.MethodBoleto: "Boleto", parcela.MethodCreditCard: "Cartão de crédito",
	}
)

// refundNote tells a payer what a canceled bill's payments received, which
// is the seller's to refund: the pages said only "não precisa ser pago",
// and the payer never learned of money the API reports received.
func refundNote(cents int64) string {
	return " Foram recebidos " + brl(cents) + " antes do cancelamento: fale com o vendedor para a devolução."
}

// lapsedWithoutNotice is a first bill's past its time with no Pix or
// boleto whose notice may still come (one charged for a card).
const lapsedWithoutNotice = "O prazo para pagar esta cobrança acabou e o pedido será cancelado. Você pode fazer um novo pedido pela oferta."

// noticeMayCome tells whether a bank's notice may still pay bill: it has
// an unpaid Pix or boleto.
func noticeMayCome(b *parcela.Bill) bool {
	for _, p := range b.Payments {
		if p.Status == parcela.PaymentUnpaid && p.Method != parcela.MethodCreditCard {
			return true
		}
	}
	return false
}
