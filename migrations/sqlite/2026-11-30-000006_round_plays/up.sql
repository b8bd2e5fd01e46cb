-- The current round's public card plays, "<seat><card>" comma-separated: what every seat has seen (bots get it with their view). Derivable from the event log; kept here so a bot needs no extra query.
ALTER TABLE games ADD COLUMN round_plays TEXT NOT NULL DEFAULT '';
