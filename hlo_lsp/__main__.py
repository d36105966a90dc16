from hlo_lsp.cli import main

raise SystemExit(main())
