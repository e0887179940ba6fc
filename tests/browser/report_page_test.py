#!/usr/bin/python3
"""The HTML report (`symtrace report MODEL --format html`) in headless Chromium.

Usage: report_page_test.py SYMTRACE_PROGRAM SOURCE_ROOT OUTPUT_DIR

For mixed_failures and resnet50_fail4 it makes the page and the JSON report, opens the page,
checks the totals it shows against the JSON report, unfolds the whole tree and checks every
module's row and status, opens each failed module and reads its file:line, kind and the source
line it embeds, opens every graph and counts its drawn nodes against the graph's size, follows a
call_module link, and searches for a module by path and by type; it saves a screenshot of each
page in OUTPUT_DIR. It also checks that the pages are well-formed HTML (html5lib's strict parser,
tidy) and make no network request, that resnet50_fail16's page is under 3 MB and ready in under
2 s, that deep_mlp_10000's page draws its tree at once and its graph only when opened, and that
names holding <, & and quotes show as text. The program runs in SOURCE_ROOT, so that failures'
source files (src/zoo/...) are found and embedded.

Each check group is one case; the last line is a summary in doctest's form, which tools/test
counts.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

import html5lib
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

SYMTRACE, SOURCE_ROOT, OUT = (os.path.abspath(a) for a in sys.argv[1:4])
os.makedirs(OUT, exist_ok=True)


def run(*args):
    """Runs the program in the source root; returns its standard output."""
    done = subprocess.run([SYMTRACE, *args], cwd=SOURCE_ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"symtrace {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done.stdout


def make_page(model, *extra):
    """The page and the JSON report of `model`, written in OUT; returns (page path, report)."""
    page = os.path.join(OUT, f"{model}.html")
    run("report", model, "--format", "html", "-o", page, *extra)
    report = json.loads(run("report", model, "--format", "json", *extra))
    return page, report


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="symtrace-chromium-")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1400,900", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    driver.profile_dir = profile
    return driver


def open_page(driver, page):
    """Loads `page` and waits until its script has drawn it; returns ms until it was ready."""
    driver.get("file://" + os.path.abspath(page))
    WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready === 'true'"))
    return float(driver.execute_script("return document.body.dataset.readyMs"))


def js_click(driver, element):
    """A click as a user's: SVG nodes may lie outside the part of the drawing in view."""
    driver.execute_script("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", element)


def shown_totals(driver):
    totals = {}
    for t in driver.find_elements(By.CSS_SELECTOR, "#totals [data-total]"):
        totals[t.get_attribute("data-total")] = t.find_element(By.TAG_NAME, "dd").text
    return totals


def row(driver, path):
    rows = driver.find_elements(By.CSS_SELECTOR, "#tree .row")
    for r in rows:
        if r.get_attribute("data-path") == path:
            return r
    raise AssertionError(f"no row for module '{path}'")


def select(driver, path):
    """Clicks the module's row; returns the detail pane."""
    r = row(driver, path)
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", r)
    r.find_element(By.CLASS_NAME, "name").click()
    detail = driver.find_element(By.ID, "detail")
    index = r.get_attribute("data-module")
    assert detail.get_attribute("data-module") == index, (path, detail.get_attribute("data-module"), index)
    return detail


def draw_graph(driver, section):
    """Draws the graph of a .graph-section (if not drawn yet); returns its drawn nodes."""
    opens = section.find_elements(By.CLASS_NAME, "open-graph")
    if opens:
        opens[0].click()
    WebDriverWait(driver, 60).until(lambda d: section.find_elements(By.CSS_SELECTOR, "svg.graph"))
    return section.find_elements(By.CSS_SELECTOR, "svg.graph g.node")


def source_line(source):
    """The text of the line a "file:line" names, read here."""
    file, line = source.rsplit(":", 1)
    with open(os.path.join(SOURCE_ROOT, file), encoding="utf-8") as f:
        return f.read().splitlines()[int(line) - 1]


def check_well_formed(page):
    with open(page, "rb") as f:
        text = f.read()
    html5lib.HTMLParser(strict=True).parse(text)  # raises at the first parse error
    tidy = subprocess.run(["tidy", "-quiet", "-errors", page], capture_output=True, text=True)
    assert tidy.returncode == 0, f"tidy on {page} (exit {tidy.returncode}):\n{tidy.stderr}"


def check_page(driver, model):
    page, report = make_page(model)
    check_well_formed(page)
    open_page(driver, page)
    assert driver.execute_script("return performance.getEntriesByType('resource').length") == 0, \
        "the page requested something"

    # The totals shown are the JSON report's.
    shown = shown_totals(driver)
    for key in ("modules", "traced", "leaf", "failed", "unvisited", "graphs", "nodes"):
        assert int(shown[key].replace(",", "")) == report["totals"][key], (model, key, shown[key], report["totals"])
    summary = json.loads(run("analyze", model, "--format", "json"))["summary"]
    assert int(shown["parameters"].replace(",", "")) == summary["parameters"], (shown["parameters"], summary)

    # Unfolded, the tree shows every module with its status.
    driver.find_element(By.ID, "expand-all").click()
    rows = driver.find_elements(By.CSS_SELECTOR, "#tree .row")
    status = {r.get_attribute("data-path"): r.find_element(By.CLASS_NAME, "badge").text for r in rows}
    expected = {m["module"]: m["status"] for m in report["modules"]}
    assert status == expected, (model, set(status.items()) ^ set(expected.items()))
    driver.find_element(By.ID, "collapse-all").click()
    assert len([r for r in driver.find_elements(By.CSS_SELECTOR, "#tree .row") if r.is_displayed()]) == 1
    driver.find_element(By.ID, "expand-all").click()

    # Each failed module opens its failure: kind, file:line, and the line itself.
    for f in report["failed"]:
        detail = select(driver, f["module"])
        failure = detail.find_element(By.CLASS_NAME, "failure")
        assert failure.find_element(By.CLASS_NAME, "failure-source").text == f["source"], (f, failure.text)
        assert failure.find_element(By.CLASS_NAME, "failure-kind").text == f["kind"]
        assert failure.find_element(By.CLASS_NAME, "failure-message").text == f["message"]
        hit = failure.find_element(By.CSS_SELECTOR, ".snippet .hit").text
        line = source_line(f["source"])
        assert hit.endswith(line.strip()) and hit.startswith(f["source"].rsplit(":", 1)[1]), (hit, line)
    driver.save_screenshot(os.path.join(OUT, f"{model}.png"))

    # Every graph, drawn, has one box per node.
    for g in report["graphs"]:
        detail = select(driver, g["module"])
        section = detail.find_element(By.CSS_SELECTOR, ":scope > .graph-section")
        assert len(draw_graph(driver, section)) == g["nodes"], (model, g)

    # A call_module node of the model's graph opens its module.
    detail = select(driver, "")
    links = draw_graph(driver, detail.find_element(By.CSS_SELECTOR, ":scope > .graph-section"))
    links = [n for n in links if "link" in n.get_attribute("class").split()]
    assert links, f"{model}: the model's graph has no call_module link"
    def called(node):  # the second line of its box: call_module[layer1.0]
        target = node.find_elements(By.TAG_NAME, "text")[1].get_attribute("textContent")
        return re.fullmatch(r"call_module\[(.*)\]", target).group(1)
    for node in links:
        assert expected[called(node)] in ("traced", "failed"), (called(node), expected[called(node)])
    node = links[-1]
    path, link = called(node), node.get_attribute("data-link")
    js_click(driver, node)
    detail = driver.find_element(By.ID, "detail")
    assert detail.find_element(By.CLASS_NAME, "detail-title").text == path, (path, detail.text[:200])
    assert detail.get_attribute("data-module") == link
    assert detail.find_elements(By.CSS_SELECTOR, ":scope > .graph-section svg.graph g.node") or \
        detail.find_elements(By.CLASS_NAME, "failure"), "the link opened neither a graph nor a failure"
    assert "selected" in row(driver, path).get_attribute("class").split()

    # Search by path and by type.
    failed = report["failed"][0]
    for query, want in ((failed["module"], failed["module"]), (failed["type"], failed["module"])):
        box = driver.find_element(By.ID, "search")
        box.clear()
        box.send_keys(query)
        results = driver.find_elements(By.CSS_SELECTOR, "#search-results .result")
        paths = [r.find_element(By.CLASS_NAME, "path").text for r in results]
        assert want in paths, (query, paths)
        results[paths.index(want)].click()
        detail = driver.find_element(By.ID, "detail")
        assert detail.find_element(By.CLASS_NAME, "detail-title").text == want
        assert not driver.find_element(By.ID, "search-results").is_displayed()
    box = driver.find_element(By.ID, "search")
    box.clear()
    box.send_keys("no module is called this")
    assert driver.find_elements(By.CSS_SELECTOR, "#search-results .result") == []
    box.send_keys(Keys.ESCAPE)


def check_large_pages(driver):
    page, report = make_page("resnet50_fail16")
    size = os.path.getsize(page)
    assert size < 3_000_000, f"resnet50_fail16's page is {size} bytes"
    times = [open_page(driver, page) for _ in range(3)]
    assert min(times) < 2000, f"resnet50_fail16's page was ready after {times} ms"
    print(f"resnet50_fail16: {size} bytes, ready after {min(times):.0f} ms (best of 3)")

    started = time.monotonic()
    page, report = make_page("deep_mlp_10000")
    made = time.monotonic() - started
    times = [open_page(driver, page) for _ in range(3)]
    print(f"deep_mlp_10000: {os.path.getsize(page)} bytes, made in {made:.1f} s, ready after {min(times):.0f} ms")
    assert min(times) < 2000, f"deep_mlp_10000's page was ready after {times} ms"
    blocks = row(driver, "blocks")  # the model's child, unfolded at once
    assert blocks.is_displayed()
    assert driver.find_elements(By.CSS_SELECTOR, "svg.graph") == [], "a graph was drawn before it was opened"
    detail = driver.find_element(By.ID, "detail")
    nodes = draw_graph(driver, detail.find_element(By.CSS_SELECTOR, ":scope > .graph-section"))
    assert len(nodes) == report["graphs"][0]["nodes"], (len(nodes), report["graphs"][0])


def check_escaping(driver):
    """A saved report whose model, module names, types and messages hold markup shows it as text."""
    document = json.loads(run("report", "mixed_failures", "--format", "document"))
    hostile = "<b id=\"injected\">bold</b> & 'quotes' \"too\" </script><!--"
    document["model"] = "model " + hostile
    for m in document["modules"]:
        m["type"] = m["type"] + "<" + hostile + ">"
    for f in document["failed"]:
        f["message"] = hostile + " " + f["message"]
        f["type"] = f["type"] + "<" + hostile + ">"
    for g in document["graphs"]:
        g["type"] = g["type"] + "<" + hostile + ">"
    # A module's name, and so its path (the unvisited `unused`), and a failure's file name.
    name = "un<i id=\"injected\">used</i>&'\"x"
    for m in document["modules"]:
        if m["module"] == "unused":
            m["module"] = name
        for c in m["children"]:
            if c["name"] == "unused":
                c["name"] = name
    document["failed"][1]["source"] = "<b id=\"injected\">&'\".cpp:7"
    saved = os.path.join(OUT, "hostile.json")
    with open(saved, "w", encoding="utf-8") as f:
        json.dump(document, f)
    page = os.path.join(OUT, "hostile.html")
    run("report", saved, "--format", "html", "-o", page)
    check_well_formed(page)
    open_page(driver, page)
    assert driver.find_elements(By.ID, "injected") == [], "markup from the report became an element"
    assert driver.title.startswith("model " + hostile), driver.title
    assert driver.find_element(By.ID, "model").text == "model " + hostile
    driver.find_element(By.ID, "expand-all").click()
    types = {r.get_attribute("data-path"): r.find_element(By.CLASS_NAME, "type").get_attribute("textContent")
             for r in driver.find_elements(By.CSS_SELECTOR, "#tree .row")}
    assert all(t.endswith("<" + hostile + ">") for t in types.values()), types
    failed = document["failed"][0]
    detail = select(driver, failed["module"])
    assert detail.find_element(By.CLASS_NAME, "failure-message").text == failed["message"]
    names = [r.find_element(By.CLASS_NAME, "name").get_attribute("textContent")
             for r in driver.find_elements(By.CSS_SELECTOR, "#tree .row")]
    assert name in names, names
    assert select(driver, name).find_element(By.CLASS_NAME, "detail-title").text == name
    failed = document["failed"][1]
    detail = select(driver, failed["module"])
    assert detail.find_element(By.CLASS_NAME, "failure-source").text == failed["source"]
    assert driver.find_elements(By.ID, "injected") == []


CASES = [
    ("mixed_failures: counts, tree, failures, graphs, a link and search", lambda d: check_page(d, "mixed_failures")),
    ("resnet50_fail4: counts, tree, failures, graphs, a link and search", lambda d: check_page(d, "resnet50_fail4")),
    ("large models: resnet50_fail16 small and quick, deep_mlp_10000 drawn when opened", check_large_pages),
    ("names holding <, & and quotes show as text", check_escaping),
]


def main():
    driver = browser()
    passed = failed = 0
    try:
        for name, case in CASES:
            try:
                case(driver)
                passed += 1
                print(f"ok: {name}")
            except Exception:  # a failed case is reported and the others still run
                failed += 1
                print(f"FAILED: {name}")
                traceback.print_exc(file=sys.stdout)
    finally:
        driver.quit()
        shutil.rmtree(driver.profile_dir, ignore_errors=True)
    print(f"[doctest] test cases: {passed + failed} | {passed} passed | {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
