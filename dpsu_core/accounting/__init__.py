"""The privacy account: the durable ledger store, the corpus accounts and their charges (one place)."""
