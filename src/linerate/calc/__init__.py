"""Line-rate math (pure). See calc.linerate for the formulas and their sources."""

from linerate.calc.linerate import (ENCAPSULATIONS, FrameRate, Goodput, LinkInput, frame_rate, goodput,
                                    parse_rate, rfc2544_table)

__all__ = ["ENCAPSULATIONS", "FrameRate", "Goodput", "LinkInput", "frame_rate", "goodput", "parse_rate",
           "rfc2544_table"]
