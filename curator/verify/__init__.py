"""Machine verification of a draft: its form, its grounding in the evidence, the checks that block or
advise, and the decision to create, update or skip beside what is saved."""
