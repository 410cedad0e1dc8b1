package com.github.rocketraft.integration;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The Prometheus text format as far as a test reads it: samples with labels and a value. */
final class Prom {

    record Sample(String name, Map<String, String> labels, double value) {
        boolean has(Map<String, String> want) {
            for (var e : want.entrySet()) {
                if (!e.getValue().equals(labels.get(e.getKey()))) {
                    return false;
                }
            }
            return true;
        }
    }

    private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)\\})?\\s+(\\S+)(?:\\s+\\d+)?$");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private Prom() {}

    static List<Sample> parse(String text) {
        List<Sample> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = LINE.matcher(line.trim());
            if (!m.matches()) {
                throw new IllegalArgumentException("not a Prometheus sample line: " + line);
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2).replace("\\\"", "\"").replace("\\\\", "\\"));
                }
            }
            out.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
        }
        return out;
    }

    static List<Sample> find(List<Sample> samples, String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name) && s.has(labels)).toList();
    }

    /** The one sample of name with labels; fails when there are none or several. */
    static double value(List<Sample> samples, String name, Map<String, String> labels) {
        List<Sample> found = find(samples, name, labels);
        if (found.size() != 1) {
            throw new AssertionError(found.size() + " samples of " + name + labels + ": " + find(samples, name, Map.of()));
        }
        return found.get(0).value();
    }

    static String dump(List<Sample> samples) {
        StringBuilder b = new StringBuilder();
        for (Sample s : samples) {
            b.append(s.name()).append(s.labels()).append(' ').append(s.value()).append('\n');
        }
        return b.toString();
    }
}
