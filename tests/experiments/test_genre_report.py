"""The report's genre section (experiments/genre_report.py): the dev study of a teacher for ``accurate``, a row per
teacher weight in the weights' order, each with its proportional F1 (precision / recall) on all ULA documents and
on the news, and the bundle and commit it came from."""

import json

from experiments.genre_report import distillation_lines, genre_section


def _study(weight: float, ula: tuple[float, float, float], news: tuple[float, float, float]) -> dict:
    def scores(f1: float, precision: float, recall: float) -> dict:
        prop = {"f1": f1, "precision": precision, "recall": recall}
        return {t: {"proportional": prop} for t in ("DSE", "ESE")}

    return {
        "weight": weight,
        "bundle": f"bundle {weight}",
        "git_commit": "0123456789abcdef",
        "results": [
            {"part": "all ULA", "o_bias": 0.0, "scores": scores(*ula)},
            {"part": "all ULA", "o_bias": 0.5, "scores": scores(0.1, 0.1, 0.1)},  # a biased decoder: not a row
            {"part": "news fold-0 test", "o_bias": 0.0, "scores": scores(*news)},
        ],
    }


def test_a_row_per_teacher_weight_in_order_with_ula_and_news():
    lines = distillation_lines(
        [_study(0.9, (0.542, 0.471, 0.638), (0.735, 0.772, 0.7)), _study(0.0, (0.5, 0.4, 0.6), (0.7, 0.8, 0.6))]
    )
    rows = [line for line in lines if line.startswith("| 0.")]
    assert rows == [
        "| 0.0 | 50.0 (40.0 / 60.0) | 50.0 (40.0 / 60.0) | 70.0 (80.0 / 60.0) | 70.0 (80.0 / 60.0) "
        "| bundle 0.0, 0123456789 |",
        "| 0.9 | 54.2 (47.1 / 63.8) | 54.2 (47.1 / 63.8) | 73.5 (77.2 / 70.0) | 73.5 (77.2 / 70.0) "
        "| bundle 0.9, 0123456789 |",
    ]


def test_the_section_holds_the_study_only_where_its_results_are(tmp_path):
    assert not any("a teacher for" in line for line in genre_section(tmp_path, tmp_path))
    (tmp_path / "genre-distillation").mkdir()
    (tmp_path / "genre-distillation" / "w.json").write_text(json.dumps(_study(0.5, (0.5, 0.5, 0.5), (0.7, 0.7, 0.7))))
    lines = genre_section(tmp_path, tmp_path)
    assert "### Zero-shot: a teacher for `accurate` (dev study on the ULA documents)" in lines
    assert (
        "| 0.5 | 50.0 (50.0 / 50.0) | 50.0 (50.0 / 50.0) | 70.0 (70.0 / 70.0) | 70.0 (70.0 / 70.0) "
        "| bundle 0.5, 0123456789 |" in lines
    )
