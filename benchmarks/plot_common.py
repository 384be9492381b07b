"""What every plot script here does first: find its input and output (the command's arguments,
else the results folder beside the scripts) and load matplotlib to draw into files.
"""
import os
import sys


def paths_and_pyplot(script, default_src, default_dst):
    """(src, dst, pyplot), pyplot None (after a note) when matplotlib is not installed."""
    results = os.path.join(os.path.dirname(os.path.abspath(script)), "results")
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(results, default_src)
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(results, default_dst)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{os.path.basename(script)}: matplotlib is not installed"
              " (apt-get install python3-matplotlib); no plot drawn")
        return src, dst, None
    return src, dst, plt
