"""`pypto-opt`: xDSL's opt driver with pypto-mlir's dialects, passes and diagnostics."""

from collections.abc import Sequence

from xdsl.xdsl_opt_main import xDSLOptMain


class PyptoOptMain(xDSLOptMain):
    def __init__(self, args: Sequence[str] | None = None):
        super().__init__(description="pypto-mlir modular optimizer driver", args=args)


def main() -> None:
    PyptoOptMain().run()


if __name__ == "__main__":
    main()
