// Ledgerbase admin: the forms' behaviours (pickers, focus after a swap). Every form works without it.
