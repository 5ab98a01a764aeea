// Package parcela is the domain of a Brazilian sales and installment-billing
// API: companies, products, offers, orders, billings, bills and payments, the
// financing schedule, the business-day calendar and the rules that move each
// entity between states. It does no I/O; adapters live in sub-packages named
// after their technology (sqldb, server, webhook, brcode, jobs).
package parcela
