"""Maintainer tooling, run from the repository root and never imported by a notebook.

* ``python -m tools.nav [--check]``: the navigation cells and the README contents (``make nav``);
* ``python -m tools.run_notebooks [PATH ...]``: re-execute notebooks in place (``make notebooks``);
* ``python -m tools.figures [OUTDIR]``: regenerate ``figures/`` (``make figures``);
* ``python -m tools.present NOTEBOOK``: presentation mode in Voilà (``make present``);
* ``python -m tools.book``: the static book in ``build/book/`` (``make book``);
* ``python -m tools.lockcheck``: pyproject's dependencies against ``requirements.txt`` (``make lock-check``);
* ``python -m tools.hf_reference``: the decoder block's reference logits from transformers, in a throwaway
  environment with torch and transformers (``make hf-reference``).

What a learner's notebook imports lives in the installed package ``posenc_helpers``.
"""
