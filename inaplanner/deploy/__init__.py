"""Deployment of a plan onto a testbed (issue 7), without Qt.

* :mod:`inaplanner.deploy.ssh` — SSH to build hosts and workers (host keys refused unless recorded,
  builds under a deadline, SFTP, atomic remote writes).
* :mod:`inaplanner.deploy.p4rt` — one P4Runtime session per switch (primary, pipeline, batched
  writes with per-update errors, reads).
* :mod:`inaplanner.deploy.p4info_check`, :mod:`inaplanner.deploy.device_config`,
  :mod:`inaplanner.deploy.state` — contract check, device-config packing, entity diffs.
* :mod:`inaplanner.deploy.deployer` — the orchestration with verify and rollback
  (:func:`~inaplanner.deploy.deployer.deploy`).
* :mod:`inaplanner.deploy.emulated` — an emulated testbed for a scenario.
* :mod:`inaplanner.cli.deploy` — ``inaplanner deploy``, ``entries``, ``testbed emulate|trust``.
"""
