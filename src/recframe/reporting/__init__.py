"""What a person reads: the HTML page, the figures (chart data, matplotlib and SVG), the text report and inspect."""
