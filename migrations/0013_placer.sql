-- The placer (docs/architecture.md "One placer, many front doors"): the
-- replica that holds the placement lock decides and commits every placement
-- and stop; the others forward those calls to it. It records here, from the
-- same session that holds the lock, the address its peers reach it on, so a
-- row naming a replica was written while that replica held the lock. One
-- row at most; a new placer overwrites its predecessor's.
CREATE TABLE placer (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  replica text NOT NULL,
  address text NOT NULL CHECK (address <> ''),
  since timestamptz NOT NULL DEFAULT now()
);
