"""The commands, a module a command or a family of them; each registers its commands on the group as it
is imported.

Nothing imports these modules but the group itself, by name, when a command is looked up (``_main``'s
``_COMMANDS``): ``--help`` pays for none of them. Each command parses its arguments, calls one library
function and hands the result to a renderer (``_render``).

- ``operations``: preview (of a stack, or ``--all``), up, promote, refresh, rollback, history, recover;
- ``destroy``: destroy, with the drain before and the sweep after;
- ``drift``, ``status``: of a stack, or ``--all``;
- ``fleet``: list, matrix, job and report, across projects;
- ``plan``: the offline plan;
- ``contract``, ``policy``, ``local``: the environment contract, the bundled policy pack, the local
  cluster.
"""
