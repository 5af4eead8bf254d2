"""The lessons' self-checks under the path the lessons imported them from before they moved
(``from tapelab.exercises import self_check``, in a learner's saved copy of a lesson); they live in
:mod:`tapelab.lessons.exercises`."""

from tapelab.lessons.exercises import check, self_check  # noqa: F401

__all__ = ["check", "self_check"]
