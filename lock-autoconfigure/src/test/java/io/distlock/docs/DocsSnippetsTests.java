package io.distlock.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Every java block in {@code README.md} and {@code docs/*.md} is code that compiles: its lines are
 * found, in order, in a {@code // tag::name[]} ... {@code // end::name[]} region of a snippet class
 * in this package, which the build compiles on Spring Boot 4 and (through lock-autoconfigure-boot3)
 * on Spring Boot 3.5.
 *
 * <p>Lines are compared with their surrounding whitespace stripped and inner runs of whitespace
 * collapsed; blank lines do not count. A doc line {@code ...} or {@code // ...} stands for omitted
 * code, and a region may hold lines the doc leaves out (imports, a class around a method).
 */
class DocsSnippetsTests {

	private static final Pattern TAG = Pattern.compile("//\\s*tag::([\\w.-]+)\\[]");

	private static final Pattern END = Pattern.compile("//\\s*end::([\\w.-]+)\\[]");

	/**
	 * The project's root, seen from the module that runs the test: lock-autoconfigure and
	 * lock-autoconfigure-boot3 are siblings under it.
	 */
	private static final Path ROOT = Path.of("..");

	private static final Path SNIPPETS = ROOT.resolve("lock-autoconfigure/src/test/java/io/distlock/docs");

	@Test
	void everyJavaBlockInTheDocsIsInACompiledSnippet() throws IOException {
		Map<String, List<String>> regions = regions(SNIPPETS);
		assertThat(regions).as("tagged regions under " + SNIPPETS.toAbsolutePath().normalize()).isNotEmpty();
		List<Path> pages = pages();
		assertThat(pages).as("README.md and docs/*.md").hasSizeGreaterThan(10);
		List<String> missing = new ArrayList<>();
		int blocks = 0;
		for (Path page : pages) {
			for (Block block : javaBlocks(page)) {
				blocks++;
				if (regions.values().stream().noneMatch(region -> containsInOrder(region, block.lines()))) {
					missing.add(block.describe());
				}
			}
		}
		assertThat(blocks).as("java blocks found").isGreaterThan(10);
		assertThat(missing)
			.as("java blocks not found in any tagged region of " + SNIPPETS.normalize()
					+ " (add the code there, between // tag::name[] and // end::name[], or fix the doc)")
			.isEmpty();
	}

	@Test
	void aBlockThatDiffersFromEverySnippetIsReported() {
		List<String> region = normalise(List.of("@DistributedLock(key = \"#id\")", "public void ship(String id) {",
				"    send(id);", "}"));
		assertThat(containsInOrder(region, normalise(List.of("@DistributedLock(key = \"#id\")",
				"public void ship(String id) {", "    // ...", "}")))).isTrue();
		assertThat(containsInOrder(region, normalise(List.of("@DistributedLock(key = \"#orderId\")",
				"public void ship(String id) {")))).isFalse();
		assertThat(containsInOrder(region, normalise(List.of("}", "public void ship(String id) {")))).isFalse();
	}

	private static List<Path> pages() throws IOException {
		List<Path> pages = new ArrayList<>();
		pages.add(ROOT.resolve("README.md"));
		try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
			docs.filter(path -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		return pages;
	}

	/** A java block of a page: where it starts and its lines. */
	record Block(Path page, int line, List<String> lines) {

		String describe() {
			String first = this.lines.isEmpty() ? "(empty)" : this.lines.get(0);
			return ROOT.relativize(this.page) + ":" + this.line + ": " + first;
		}

	}

	static List<Block> javaBlocks(Path page) throws IOException {
		List<String> lines = Files.readAllLines(page, StandardCharsets.UTF_8);
		List<Block> blocks = new ArrayList<>();
		for (int i = 0; i < lines.size(); i++) {
			if (lines.get(i).strip().equals("```java")) {
				int start = i + 1;
				List<String> block = new ArrayList<>();
				for (i = start; i < lines.size() && !lines.get(i).strip().startsWith("```"); i++) {
					block.add(lines.get(i));
				}
				blocks.add(new Block(page, start + 1, normalise(block)));
			}
		}
		return blocks;
	}

	/** Tagged regions of every snippet source, by file and tag. */
	static Map<String, List<String>> regions(Path directory) throws IOException {
		Map<String, List<String>> regions = new LinkedHashMap<>();
		List<Path> sources;
		try (Stream<Path> files = Files.list(directory)) {
			sources = files.filter(path -> path.toString().endsWith(".java")).sorted().toList();
		}
		for (Path source : sources) {
			Map<String, List<String>> open = new LinkedHashMap<>();
			for (String line : Files.readAllLines(source, StandardCharsets.UTF_8)) {
				Matcher tag = TAG.matcher(line.strip());
				Matcher end = END.matcher(line.strip());
				if (tag.matches()) {
					open.put(tag.group(1), new ArrayList<>());
				}
				else if (end.matches()) {
					List<String> region = open.remove(end.group(1));
					assertThat(region).as(source + ": end::" + end.group(1) + " without its tag").isNotNull();
					regions.put(source.getFileName() + "#" + end.group(1), normalise(region));
				}
				else {
					open.values().forEach(region -> region.add(line));
				}
			}
			assertThat(open.keySet()).as(source + ": tags never ended").isEmpty();
		}
		return regions;
	}

	static List<String> normalise(List<String> lines) {
		return lines.stream().map(line -> line.strip().replaceAll("\\s+", " ")).filter(line -> !line.isEmpty()).toList();
	}

	/**
	 * @return whether every line of {@code block} (but the {@code ...} ones) is in {@code region},
	 * in the same order
	 */
	static boolean containsInOrder(List<String> region, List<String> block) {
		int next = 0;
		for (String line : block) {
			if (line.equals("...") || line.equals("// ...")) {
				continue;
			}
			while (next < region.size() && !region.get(next).equals(line)) {
				next++;
			}
			if (next == region.size()) {
				return false;
			}
			next++;
		}
		return true;
	}

}
