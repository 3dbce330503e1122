"""The words that say something is not there, shared by the deep read's guards on claimed absences
(absence.py) and on what the checklist found (checked.py). Each module builds its own regexes from
them, adding the words only it needs; these go between word boundaries."""

NEGATION = r"not|no|never|nor|without"  # "does not report", "no baseline", "without a test"
LACK = r"lacks?|lacking|omits?"  # "the paper lacks …", "it omits the variance"
