"""``python -m verifier.cli``: the same as the ``mha-verify`` command."""
import sys

from verifier.cli import main

sys.exit(main())
