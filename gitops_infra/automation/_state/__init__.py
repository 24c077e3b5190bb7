"""What Pulumi keeps on disk, read where and as the engine reads it: private plumbing of
:mod:`gitops_infra.automation`.

- ``project`` and ``stack_files``: the project file and each stack's settings file, through one guarded
  loader;
- ``backend`` and ``file_backend``: which backend holds a stack's state, and the files a file backend
  keeps (the lock, the checkpoint, the history);
- ``history``: what each deployment did, from those files or through the engine;
- ``git``: the project's repository, its commits, its work tree's state;
- ``target``: a stack resolved to its project, engine, backend and secrets (``StackTarget``).
"""
