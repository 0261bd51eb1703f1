from inaplanner.cli import main

raise SystemExit(main())
