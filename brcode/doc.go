// Package brcode produces and validates the Brazilian payment codes that
// parcela hands to payers, and renders their images:
//
//   - the FEBRABAN bank boleto ("boleto de cobrança"): the 44-digit barcode,
//     the 47-digit linha digitável and the interleaved 2-of-5 barcode image;
//   - the Pix BR Code (EMV QRCPS merchant-presented payload) and its QR image;
//   - CPF and CNPJ check digits.
//
// Payers paste these codes into real bank validators and Pix readers, so
// every rule here follows the published formats (FEBRABAN layout, Banco
// Central "Manual de Padrões para Iniciação do Pix") rather than anything
// parcela-specific. The tests pin each algorithm to published examples.
package brcode
