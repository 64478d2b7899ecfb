"""What every kind's validation is written with: ``ValidateObjectMeta``'s pieces
(``objectmeta``, worded as apimachinery's validation), and the field helpers of the
groups' validators (``common``, ``paths``), worded as upstream's ``field.ErrorList``
constructors. Each kind's own validation is its group's (``registry.groups.<group>``).
May import: stdlib, ``kubegc.api``.
"""
