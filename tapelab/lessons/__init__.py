"""What the lessons use beside the engine: the exercises' self-checks, the live plots, learner-sized tracebacks."""
