"""Settings shared by every test module: the hypothesis profile.

``default``: 150 examples, no deadline (shared machines are noisy: a slow example is not a bug).
Fuzz modules set their own example counts (PE_FUZZ_EXAMPLES, PE_FUZZ_APP_EXAMPLES).
"""

from hypothesis import settings

settings.register_profile("default", max_examples=150, deadline=None)
settings.load_profile("default")
