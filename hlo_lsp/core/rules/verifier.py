VERIFIER_RULES = ()
def verify(mod):
    return []
