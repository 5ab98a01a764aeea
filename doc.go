// Package parcela is the domain of a Brazilian sales and installment-billing
// API: companies, products, offers, orders, billings, bills and payments, the
// financing schedule, the business-day calendar and the rules that move each
// entity between states; and the use cases every front door calls
// (service.go), which read through the store's ports (store.go), decide, and
// hand the store a Change to apply. It does no I/O of its own; adapters live
// in sub-packages named after their technology (sqldb, server, webhook,
// brcode, jobs).
package parcela
