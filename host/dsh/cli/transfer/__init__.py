"""Moving a store's contents: `dsh store copy` (`copy`), who holds a store (`holders`),
and how far a long command got (`progress`)."""
