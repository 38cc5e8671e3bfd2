import sys

from l3mp.cli import main

sys.exit(main())
