// Ledgerbase admin: the lists' behaviours (selecting rows for bulk actions). Every list works without it.
