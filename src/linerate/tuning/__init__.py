"""Tuning knowledge: a versioned knob catalog as data files, and the audit, explain and recommend
logic over it. Pure: files in, findings out."""
